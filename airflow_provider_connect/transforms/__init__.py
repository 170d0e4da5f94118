"""Apache Kafka's single message transformations and predicates, in Python: the same class
names (``org.apache.kafka.connect.transforms.InsertField$Value`` resolves to
:class:`~.insert_field.InsertFieldValue`), the same keys, the same behaviour on schemaful and
schemaless records, nulls and tombstones, and the same error messages (with Python's type
names where Kafka's name Java classes). Each is registered as an entry point of
``airflow_provider_connect.transforms`` or ``airflow_provider_connect.predicates``.
"""
