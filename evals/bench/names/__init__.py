"""``sgam bench --only names``: finding a subject by its name in a tenant of 100,000."""
