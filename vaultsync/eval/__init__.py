"""Retrieval evaluation: datasets run through the real pipeline, scored by ranking metrics."""
