-- Placeholder: keeps the migration numbers gapless on branch issue-21, whose own migration is
-- 0011 because issue 20's branch adds the 0010. At merge time delete this file when the real 0010
-- arrives (keep it otherwise). It changes nothing.
SELECT 1;
