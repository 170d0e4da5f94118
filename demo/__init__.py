"""``make demo`` (``python -m demo``) and ``make airflow`` (``python -m demo.airflow``), on the
services of ``tests_common``. Checkout-only: not part of the distribution."""
