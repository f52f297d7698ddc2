-- Full-text search over episodes, for lexical and hybrid evidence search
-- (store/episodes/lexical.py): an exact token (an order number, an email, a product code, a rare
-- surname) is found by its words, not only by its embedding.
--
-- The document is a stored generated column, so every writer (a recorded episode, a bulk
-- import's COPY, an erasure that empties the text) keeps it current without code of its own.
-- Its text search configuration is `simple` (words lowercased, no stemming, no stop words);
-- `sgam migrate` rebuilds the column with SGAM_TEXT_SEARCH_CONFIG's when that differs
-- (store/db/text_search.py).
--
-- The GIN index leads with the tenant (btree_gin): a lexical search counts how many of the
-- tenant's episodes hold each word of the query, and the index answers that for the tenant
-- alone, however many episodes other tenants hold with the same word.
CREATE EXTENSION IF NOT EXISTS btree_gin;

ALTER TABLE episodes ADD COLUMN text_search tsvector
    GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, coalesce(text, ''))) STORED;

CREATE INDEX episodes_text_search ON episodes USING gin (tenant_id, text_search);
