"""Search requests: pure builders of OpenSearch request bodies."""
