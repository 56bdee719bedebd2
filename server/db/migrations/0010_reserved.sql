-- Reserved on branch issue-24 only: numbers 0010 and 0011 belong to the OAuth (issue 20) and payments
-- (issue 21) branches of the same wave. Drop this file when merging, in favour of theirs.
SELECT 1;
