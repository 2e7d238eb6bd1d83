"""One module per tool, each named for it, behind the facade ``service.search.service.SearchService``."""
