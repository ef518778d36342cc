"""Kubernetes facts every stage reads: name and number rules (``names``), quantities
(``quantity``), releases, API versions and feature gates (``versions``), the bundled
strict schemas checked by jsonschema (``schemas``), the driver attribute catalog
(``catalog``, data in ``dra_migrate/catalog/``)."""
