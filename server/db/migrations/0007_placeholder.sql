-- Placeholder: keeps the migration numbers gapless on branch issue-24, whose own migration is
-- 0008 because another branch may add a 0007. At merge time delete this file if a real 0007
-- arrives (keep it otherwise). It changes nothing.
SELECT 1;
