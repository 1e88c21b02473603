"""Hybrid search over the derived index: a query in any language → the chunks that matter, in stages."""
