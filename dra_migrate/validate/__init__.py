"""Stage 6, validate: DRA objects and the pod specs that use them.

Per file (``check_file``, ``objects``): strict schemas, the rules schemas cannot say
(names, counts, one-of fields, list sizes, references inside a claim), CEL selectors
against the driver attribute catalog. Across files (``cross_check``, ``references``):
pod claims resolve to templates and claims of their namespace, container claims name
existing requests, device classes are known. With ResourceSlices (``check_slices``,
``slices``): every class and request is evaluated on the real devices, so a claim
that would stay Pending is found before it reaches a cluster. This module re-exports
the names other packages use.
"""

from dra_migrate.validate.model import FileCheck as FileCheck
from dra_migrate.validate.model import ValidateSettings as ValidateSettings
from dra_migrate.validate.objects import NEEDLES as NEEDLES
from dra_migrate.validate.objects import check_documents as check_documents
from dra_migrate.validate.objects import check_file as check_file
from dra_migrate.validate.references import cross_check as cross_check
from dra_migrate.validate.slices import check_slices as check_slices
from dra_migrate.validate.slices import devices_for as devices_for
from dra_migrate.validate.slices import published_names as published_names

__all__ = [
    "NEEDLES",
    "FileCheck",
    "ValidateSettings",
    "check_documents",
    "check_file",
    "check_slices",
    "cross_check",
    "devices_for",
    "published_names",
]
