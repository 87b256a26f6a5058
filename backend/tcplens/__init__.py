"""tcplens: why was this TCP transfer slow, and what do I change?"""

__version__ = "0.1.0"
