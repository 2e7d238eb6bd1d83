"""The engine: the one door to it (``gateway``), the managed node (``launcher``), the index, its templates and
pipelines (``index_admin``), the side index of what built it (``index_meta``), and the field names the
product reads with its standard queries (``fields``)."""
