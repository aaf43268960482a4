"""A copy's facts: the Facts model, the shipped releases' facts, the cache, the selection."""
