"""Retrieval-quality evaluation of the real pipeline on evaluation sets: workspaces, metrics (recall@k, MRR), variants."""
