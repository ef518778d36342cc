"""Stage 1, discover: the files of a repository (``discover``), the role of each in
it: Helm chart, kustomization, patch, base (``roles``), what ``--context`` folders
define (``context``), and what a run reports on (``scope``: ``--changed-since``)."""
