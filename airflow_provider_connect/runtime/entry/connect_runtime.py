"""Entry script for spark-submit: the runtime's driver.

    spark-submit --master spark://host:7077 --properties-file runtime/spark-defaults.conf \
        runtime/connect_runtime.py serve --config runtime/worker.properties

Arguments are those of ``connect-runtime`` (``standalone`` or ``serve``). The project must
be installed on the driver and on every executor (the same Python environment). The script
ships in the package, alone in its folder (a script's folder comes first on ``sys.path``):
``ConnectRuntimeSubmitOperator`` submits it from there; ``runtime/connect_runtime.py`` in the
repository links to it.
"""

import sys

from airflow_provider_connect.runtime.cli import main

if __name__ == "__main__":
    sys.exit(main())
