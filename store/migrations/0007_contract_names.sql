-- The contract's words in SQL too (design section 8): an episode's own key is `id`, as in its
-- JSON, and references to it stay `episode_id` / `source_episode_id`; a conflict's challenger
-- columns are named as a fact's (`value`, `source_episode_id`, `source_kind`), as the
-- conflict's `challenger` object shows them. Renames only: no row changes, and foreign keys
-- and indexes follow the renamed columns.
ALTER TABLE episodes RENAME COLUMN episode_id TO id;
ALTER TABLE conflicts RENAME COLUMN challenger_value TO value;
ALTER TABLE conflicts RENAME COLUMN challenger_episode_id TO source_episode_id;
ALTER TABLE conflicts RENAME COLUMN challenger_kind TO source_kind;
ALTER INDEX conflicts_challenger RENAME TO conflicts_source;
