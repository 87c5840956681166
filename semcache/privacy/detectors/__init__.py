"""Built-in detectors, one module per family of private data."""
