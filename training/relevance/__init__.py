"""The calibrated relevance model: QA vault, first-stage features, logistic fit (``vaultsync.search.relevance``)."""
