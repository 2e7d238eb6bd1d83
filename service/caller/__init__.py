"""Who calls: a principal and its access groups (``principal``), the rule every group name obeys (``groups``),
how often a caller may ask (``limits``). The search and the server both look down to it."""
