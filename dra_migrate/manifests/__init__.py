"""Stage 2 and 3: manifests read as Kubernetes reads them. Bytes to text (``sources``),
Helm template detection (``templates``), YAML composition with exact positions
(``compose``, scalars resolved as go-yaml v2 does: ``scalars``), reading node trees
(``trees``), and the objects, pod specs and containers of a document (``kinds``,
``locate``)."""
