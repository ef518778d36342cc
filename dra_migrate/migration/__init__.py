"""The staged migration plan: the five stages from a scan (``stages``), rewrite or
bridge per workload (``strategy``), the DeviceClasses the plan needs
(``deviceclasses``)."""
