"""Citations: their grammar in a text, designations and editions, each checked against the archive."""
