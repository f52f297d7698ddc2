-- Reserved: version 24 belongs to the subject names change, merged beside this one. Versions
-- are gapless (store/migrate.py), so this file holds the number until that migration lands
-- and replaces it.
SELECT 1;
