"""Helm chart sources migrated, one chart at a time (the chart pass of a run).

A chart whose templates or values set GPU extended resources is one unit, read by
``chart.py``; ``unit.py`` chooses its way and turns it into file results:

- ``recipes.py``: a values recipe, for a chart that has a DRA switch of its own
  (data in ``recipes/*.yaml``, one file a chart family); the values files are edited
  as text, or a ``values-dra.yaml`` is written beside them;
- ``template_edit.py``: template edits behind a values switch the tool adds, for the
  team's own charts;
- the bridge, for a vendored upstream chart without a switch; manual, with the
  construct named, where neither is safe.

``convert --verify-helm`` (``pipeline/renders.py``) proves each with the real helm.
"""
