"""Who calls: a principal and its access groups (``principal``), the rule every group name obeys (``groups``), how
an HTTP caller's one bearer token becomes a principal (``identity``: static tokens, an identity provider's JWTs),
how often a caller may ask (``limits``). The search and the server both look down to it."""
