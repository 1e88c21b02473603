"""The search pipeline's stages, each a function ``stage(ctx, cands) -> cands`` in its own module."""
