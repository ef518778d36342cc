"""Cluster mode: read what runs today, from the API server or from ``kubectl get`` dumps.

Two readers give the same objects, as the API's JSON (camelCase dicts):
``LiveReader`` (``live.py``) asks the API server through the official
``kubernetes`` client (credentials from the kubeconfig or the in-cluster service
account, as the client finds them; lists paged with ``limit``/``continue``; only
``get`` and ``list``, never a write), and ``DumpReader`` (``dumps.py``) reads
``kubectl get ... -o yaml`` (or ``-o json``) files. ``build_inventory``
(``inventory.py``) turns either into the ``ClusterInventory`` of
``report/inventory.py``; ``slice_devices`` and ``cluster_classes`` give ``validate --cluster`` the
live devices to evaluate classes and claims on and the classes that exist.

Every call goes through the ``RESOURCES`` table (``resources.py``); the read-only
ClusterRole in docs/cluster.md grants exactly what it lists (a test checks both).
This module re-exports the names other packages use.
"""

from dra_migrate.cluster.dumps import DumpReader as DumpReader
from dra_migrate.cluster.inventory import build_inventory as build_inventory
from dra_migrate.cluster.inventory import cluster_classes as cluster_classes
from dra_migrate.cluster.inventory import inventory_report as inventory_report
from dra_migrate.cluster.inventory import parse_duration as parse_duration
from dra_migrate.cluster.inventory import slice_devices as slice_devices
from dra_migrate.cluster.live import DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE
from dra_migrate.cluster.live import Connection as Connection
from dra_migrate.cluster.live import LiveReader as LiveReader
from dra_migrate.cluster.resources import DISCOVERY_URL as DISCOVERY_URL
from dra_migrate.cluster.resources import EXIT_CODES as EXIT_CODES
from dra_migrate.cluster.resources import RESOURCES as RESOURCES
from dra_migrate.cluster.resources import ClusterError as ClusterError
from dra_migrate.cluster.resources import permissions as permissions

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "DISCOVERY_URL",
    "EXIT_CODES",
    "RESOURCES",
    "ClusterError",
    "Connection",
    "DumpReader",
    "LiveReader",
    "build_inventory",
    "cluster_classes",
    "inventory_report",
    "parse_duration",
    "permissions",
    "slice_devices",
]
