"""Recipes that train and probe vaultsync's own models; they import the runtime, which never imports them, and the wheel does not ship them."""
