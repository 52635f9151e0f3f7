"""thatchlab: the math behind agent memory."""
__version__ = "0.1.0"
