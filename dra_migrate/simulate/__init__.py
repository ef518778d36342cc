"""``simulate``: the migration placed by Kubernetes itself (issue 36).

A real control plane (etcd, kube-apiserver, kube-scheduler and
kube-controller-manager of one release, built from their Go modules by
``scripts/build-control-plane.sh``, never committed) is started on loopback by
``control_plane``; the repository's GPU workloads are created on a model of the
fleet before and after the conversion, the controllers and the scheduler place
them, and the two placements are compared.

The package sits above ``pipeline`` (it converts, renders and builds what
deploys) and below ``cli``.
"""
