"""Stage 4 and 5, plan and edit: the mapping file (``mapping``), what a pod spec asks
for (``asks``), the plan of claims and requests (``plan``, names by ``naming``), what
the cluster does because of the GPU limit (``controllers``), edit operations as data
(``operations``) turned into text splices (``edit``), what is reported and never
converted (``unconverted``), and diffs and atomic writes (``writer``)."""
