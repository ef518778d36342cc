"""Findings: what the pipeline tells the user, each with a stable code.

Every code lives in one table (``CODES``). A code's severity decides the exit
status; ``blocks`` says that a file with this finding is left untouched (it
could not be fully processed). ``docs/findings.md`` documents each code with
an example, and the test suite checks that the table and the page agree.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from dataclasses import dataclass


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    severity: Severity
    title: str
    blocks: bool = False  # the file is not written when this code is found in it
    # what the conversion writes beside the claims, as the summary counts it (a noun
    # phrase; "" for codes that write nothing): shown only where the file is converted
    writes: str = ""

    @property
    def unprocessed(self) -> bool:
        """The input could not be processed at all (exit 123): a blocking code of the
        0xx family (unreadable input) or 9xx (the tool's own failure). Other blocking
        codes are manifests that are wrong or need a manual edit: the file is left
        untouched and the run exits 1, like any error finding."""
        return self.blocks and self.code[3] in UNPROCESSED_FAMILIES


def _table(*codes: Code) -> dict[str, Code]:
    return {c.code: c for c in codes}


UNPROCESSED_FAMILIES = ("0", "9")  # the hundreds digit of DRAnnn

E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO

CODES: dict[str, Code] = _table(
    # 0xx: input that cannot be read or parsed
    Code("DRA001", E, "file cannot be read", blocks=True),
    Code("DRA002", E, "file is not UTF-8 text", blocks=True),
    Code("DRA003", E, "binary file", blocks=True),
    Code("DRA004", E, "malformed YAML or JSON", blocks=True),
    Code("DRA005", E, "duplicate mapping key", blocks=True),
    Code("DRA006", E, "tab character in indentation", blocks=True),
    Code("DRA007", W, "empty file"),
    Code("DRA008", E, "anchor or alias on a node the migration must edit", blocks=True),
    Code("DRA009", E, "converted file cannot be written", blocks=True),
    Code("DRA010", E, "not a regular file (FIFO, device, socket)", blocks=True),
    Code("DRA011", E, "file larger than the size limit", blocks=True),
    Code("DRA012", E, "file changed or vanished during the run: not written", blocks=True),
    Code("DRA013", E, "write through a symbolic link to outside the given paths", blocks=True),
    Code("DRA014", E, "read-only file not replaced", blocks=True),
    Code("DRA015", E, "output folder: collision or symbolic link, not written", blocks=True),
    Code("DRA016", E, "unit of files half written: putting back failed", blocks=True),
    Code("DRA030", E, "excessive or recursive YAML aliasing", blocks=True),
    Code("DRA031", W, "GPU count with a leading zero: Kubernetes reads an octal number"),
    Code("DRA032", E, "line break only YAML sees (NEL, U+2028, U+2029, lone CR)", blocks=True),
    # 1xx: GPU requests that are wrong as written
    Code("DRA101", E, "GPU count is not a whole number of 0 or more", blocks=True),
    Code("DRA102", E, "GPU requests differ from limits", blocks=True),
    Code("DRA103", E, "GPU requests without limits", blocks=True),
    Code("DRA104", W, "extended resource not in the mapping"),
    Code("DRA105", N, "GPU count of zero: no claim needed"),
    Code("DRA106", E, "GPU count set by a template expression", blocks=True),
    Code("DRA107", E, "more than 32 device requests in one pod", blocks=True),
    Code("DRA108", E, "GPU count larger than Kubernetes can hold (int64)", blocks=True),
    Code("DRA109", E, "name or namespace that Kubernetes would refuse", blocks=True),
    Code("DRA110", W, "HAMi resource (a share of a GPU): no DRA driver publishes it"),
    # 2xx: what the migration did, and what it could not do by itself
    Code("DRA201", W, "unknown kind with a pod spec: converted through the generic fallback"),
    Code("DRA202", E, "kustomize patch sets GPU resources and cannot be converted with its base"),
    Code("DRA203", W, "Helm chart template sets GPU resources: left as it is"),
    Code("DRA204", W, "Helm values file sets GPU resources: left as it is"),
    Code("DRA205", W, "shared or fractional GPU without a sharing configuration: left as it is"),
    Code("DRA206", W, "ResourceQuota on a GPU extended resource does not limit DRA claims"),
    Code("DRA207", N, "init container reuses the devices of app containers"),
    Code("DRA208", N, "GPU product node selector"),
    Code(
        "DRA209",
        N,
        "rayStartParams.num-gpus set from the GPU count",
        writes="KubeRay num-gpus setting(s)",
    ),
    Code("DRA210", N, "generated name shortened"),
    Code(
        "DRA211",
        E,
        "JSON file holds one object: no place for the ResourceClaimTemplate",
        blocks=True,
    ),
    Code("DRA212", W, "GPUs requested outside a pod template: not converted"),
    Code("DRA213", E, "Argo template already has a podSpecPatch: convert it by hand", blocks=True),
    Code("DRA214", W, "target API not served by default or deprecated at this Kubernetes version"),
    Code("DRA215", W, "runs on Knative Serving, which rejects claims: left on the device plugin"),
    Code(
        "DRA216",
        W,
        "cluster-scoped template: the ResourceClaimTemplate is needed in every namespace",
    ),
    Code("DRA217", W, "two files generate different ResourceClaimTemplates of one name"),
    Code("DRA218", E, "LimitRange puts the GPU extended resource back into containers"),
    Code("DRA219", E, "kustomize renames ResourceClaimTemplates but not the pods' references"),
    Code("DRA220", W, "pod bypasses the scheduler (spec.nodeName): its claim is never allocated"),
    Code("DRA221", W, "generateName workload: the template in its file is created only once"),
    Code(
        "DRA222",
        E,
        "kustomize overlays patch GPU resources of this base in a way not converted: neither is",
        blocks=True,
    ),
    Code("DRA223", W, "Kueue quota on a GPU extended resource does not count DRA claims"),
    Code(
        "DRA224",
        N,
        "toleration that admission added for the extended resource, written",
        writes="toleration(s) that ExtendedResourceToleration added",
    ),
    Code("DRA225", W, "pod's scheduler may not allocate ResourceClaims"),
    Code("DRA226", W, "Kueue queue counted the GPU limit: its quota stops counting the pod"),
    Code("DRA227", W, "GPU request inside a string (a manifest in a ConfigMap): never converted"),
    Code(
        "DRA228",
        W,
        "operator derives a setting from the GPU limit that the rewrite cannot keep: not converted",
    ),
    Code(
        "DRA229",
        N,
        "setting an operator derived from the GPU limit, written",
        writes="operator setting(s) derived from the GPU limit",
    ),
    Code(
        "DRA230",
        N,
        "kustomize patch converted with its base",
        writes="kustomize overlay patch(es) converted with their bases",
    ),
    Code("DRA231", E, "kustomize build after the conversion differs from the converted build"),
    Code("DRA232", N, "kustomize builds verified before and after the conversion"),
    Code("DRA233", N, "kustomize patch left as it is: its base is bridged"),
    # 24x: Helm chart sources (dra_migrate/helm/), proven by rendering (pipeline/renders.py)
    Code("DRA240", N, "Helm chart migrated through its values recipe (its own DRA switch)"),
    Code("DRA241", N, "chart templates given a DRA switch: a chart version bump is proposed"),
    Code("DRA242", W, "Helm chart left on the device plugin: served by a bridge DeviceClass"),
    Code("DRA243", W, "Helm chart left as it is: a construct no way rewrites exactly"),
    Code("DRA244", E, "Helm chart rendering after the migration differs from the converted one"),
    Code("DRA245", N, "Helm chart renderings proven before and after the migration"),
    Code("DRA246", N, "Helm chart migrated already: nothing to do"),
    Code("DRA247", W, "values file sets the GPU key in a shape the template edit cannot follow"),
    Code("DRA248", W, "Helm chart migration not proven by rendering"),
    Code("DRA249", W, "Helm chart left as it is: its migration changes a file outside the paths"),
    Code("DRA250", E, "proof refused: a symbolic link leaves the chart or the repository"),
    Code("DRA251", W, "kustomize build not verified: a remote or missing base is never fetched"),
    Code("DRA252", W, "kustomize build not verified: it could not be copied or built before"),
    # 26x: the fleet's GPU sharing model (repo/sharing.py, convert/sharing.py)
    Code("DRA260", N, "time-sliced GPU converted to consumable shares of one device"),
    Code(
        "DRA261", W, "shared GPU left on the device plugin: the DRA driver in use cannot share it"
    ),
    Code("DRA262", W, "shared GPU left on the device plugin: replica counts differ between GPUs"),
    Code("DRA263", W, "MPS-shared GPU left on the device plugin: claims of their own share no MPS"),
    Code(
        "DRA264", W, "shared GPU request the device plugin never placed on one GPU: left as it is"
    ),
    Code("DRA265", W, "MIG slice of an unknown profile (single strategy): left as it is"),
    Code("DRA266", N, "MIG slice (single strategy) converted to the MIG device class"),
    Code("DRA267", N, "DRA driver's Helm values set to publish the pools' consumable shares"),
    Code(
        "DRA268", W, "DRA driver's Helm values left: the GPUs its release serves share differently"
    ),
    Code("DRA269", N, "GPU Operator's Helm values left: the device plugin stays on for its nodes"),
    Code("DRA270", W, "pod pinned to a Karpenter node pool: held on the device plugin"),
    Code("DRA271", W, "pod selects GKE nodes that never run DRA: held on the device plugin"),
    Code("DRA272", W, "KAITO waits for device-plugin GPUs on its nodes: held on the device plugin"),
    Code(
        "DRA273",
        W,
        "operator reads or writes the GPU count of this pod template: held on the device plugin",
    ),
    Code("DRA274", W, "manifest template (envsubst, Jinja) found by a walk sets GPUs: listed"),
    Code("DRA275", W, "GPU count outside a pod spec that an operator reads: left as it is"),
    Code("DRA276", N, "Karpenter NodePool caps GPU capacity (spec.limits): not a request"),
    Code("DRA277", N, "pod selects a managed node pool: DRA scale-up depends on its autoscaler"),
    Code("DRA278", W, "Helm values key sets GPUs an operator builds pods from: left as it is"),
    Code("DRA279", W, "GPUs asked through an operator's resource profile: nothing to convert"),
    Code(
        "DRA284",
        N,
        "KServe preset in a namespace of its own converted: only that namespace's services merge it",
    ),
    Code(
        "DRA285", N, "pod selects a GKE custom compute class: its node pools must be made for DRA"
    ),
    Code(
        "DRA286",
        W,
        "converted KServe service merges presets: a GPU a preset sets stays in its pods",
    ),
    Code(
        "DRA290",
        N,
        "kustomize name reference configuration written for renamed ResourceClaimTemplates",
        writes="kustomize name reference configuration(s) for renamed templates",
    ),
    Code("DRA291", E, "nothing written: a Helm chart of the run is not proven by rendering"),
    # 3xx: validate: DRA objects and the pods that use them
    Code("DRA301", E, "object fails the strict schema of its API version"),
    Code("DRA302", E, "API version not served, or the classic DRA API"),
    Code("DRA303", W, "DRA object in another API version than the target"),
    Code("DRA304", W, "alpha DRA API (v1alpha3): not checked against a schema"),
    Code("DRA311", E, "invalid name"),
    Code("DRA312", E, "invalid count or allocationMode"),
    Code("DRA313", E, "duplicate name or too many entries"),
    Code(
        "DRA314",
        E,
        "request must set exactly one of exactly (or deviceClassName) and firstAvailable",
    ),
    Code(
        "DRA315",
        E,
        "pod claim must set exactly one of resourceClaimName and resourceClaimTemplateName",
    ),
    Code("DRA316", E, "container claim names a missing pod claim or request"),
    Code("DRA317", E, "container refers to the same claim or request twice"),
    Code("DRA318", W, "ResourceClaimTemplate or ResourceClaim not defined in the input"),
    Code("DRA319", W, "device class not defined in the input nor installed by a known driver"),
    Code("DRA320", E, "constraint or config names a missing request, or an unqualified attribute"),
    Code("DRA321", E, "invalid opaque driver configuration"),
    Code("DRA322", W, "two different definitions of one ResourceClaimTemplate or ResourceClaim"),
    Code("DRA323", W, "pods of a replicated workload share one ResourceClaim"),
    Code("DRA324", W, "bridge DeviceClass of a MIG profile does not select that profile"),
    Code("DRA330", E, "CEL selector does not compile"),
    Code("DRA331", E, "stale or wrong name (attribute, capacity or config apiVersion)"),
    Code("DRA332", E, "attribute or capacity the driver does not publish"),
    Code("DRA333", E, "CEL type error"),
    Code("DRA334", E, "wrong attribute domain"),
    Code("DRA335", W, "value or driver name never seen from a known driver"),
    Code("DRA336", E, "name the driver release this run assumes does not publish"),
    Code("DRA337", W, "name the driver has deprecated: use its replacement"),
    Code("DRA338", E, "driver configuration field the assumed driver release does not decode"),
    Code("DRA340", E, "request matches no device in the ResourceSlices"),
    Code("DRA341", E, "no node has enough matching devices for the request"),
    Code("DRA342", E, "DeviceClass matches no device in the ResourceSlices"),
    Code("DRA343", N, "devices that match, per node"),
    Code("DRA344", E, "selector fails when evaluated on a device"),
    Code("DRA345", E, "CEL selector too complex: estimated cost exceeds the API server's limit"),
    Code("DRA346", W, "semver() or quantity() literal that does not parse: fails on every device"),
    Code("DRA347", E, "selector without cel, or config entry without opaque configuration"),
    Code("DRA348", E, "invalid label or annotation"),
    Code("DRA349", E, "resources.claims at the pod level"),
    Code("DRA350", W, "attribute domain the catalog does not know, resembling one it knows"),
    Code("DRA351", E, "constraint on an attribute no matching device publishes"),
    Code("DRA352", W, "count 0 with ExactCount: the API server makes it 1"),
    Code("DRA353", E, "field behind a feature gate that is off in the Kubernetes release"),
    Code("DRA354", E, "invalid device toleration or taint"),
    Code("DRA355", E, "invalid capacity request or capacity request policy"),
    Code("DRA356", E, "invalid shared counters or counter consumption"),
    Code("DRA357", E, "invalid ResourceSlice"),
    Code("DRA358", E, "invalid DeviceTaintRule"),
    Code("DRA359", E, "invalid binding conditions"),
    Code("DRA360", E, "adminAccess in a namespace without the admin-access label"),
    Code("DRA361", W, "fractional capacity range without DRAFractionalCapacityRange: rounded up"),
    # 4xx: workflow: suppressions and hooks
    Code("DRA401", E, "GPU request left on the device plugin (convert --check)"),
    Code("DRA402", N, "ignore comment silences nothing"),
    Code("DRA403", N, "ignore entry of the configuration silences nothing"),
    Code("DRA404", W, "ignore names an unknown finding code"),
    Code("DRA405", W, "ignore comment not in a documented form: silences nothing"),
    # 5xx: report and strategies: DeviceClasses, the bridge strategy, capacity, risks
    Code("DRA501", E, "invalid DeviceClass value in the configuration"),
    Code("DRA502", E, "DeviceClass CEL selector is invalid"),
    Code("DRA503", E, "rendered DeviceClass does not read back as the values given", blocks=True),
    Code("DRA504", W, "mapping names a DeviceClass that nothing creates"),
    Code("DRA505", N, "driver configuration needs a driver feature gate"),
    Code("DRA506", E, "driver configuration field the driver release does not decode"),
    Code("DRA510", E, "two DeviceClasses map the same extended resource"),
    Code("DRA511", E, "bridged extended resource has no DeviceClass of its own"),
    Code("DRA512", W, "node still advertises the bridged extended resource from the device plugin"),
    Code("DRA513", W, "cluster does not serve the bridge strategy by default"),
    Code("DRA514", N, "bridged workload left as it is: a DeviceClass maps its extended resource"),
    Code("DRA515", E, "bridged workload, but no DeviceClass maps its extended resource"),
    Code(
        "DRA516", E, "bridged workload, but the target Kubernetes version does not serve the bridge"
    ),
    Code("DRA517", W, "repository DeviceClass maps an extended resource a driver's class maps"),
    Code("DRA518", N, "bridged name already mapped by a class its driver installs: none generated"),
    Code("DRA520", W, "many replicas: one ResourceClaim per pod counts against claim quotas"),
    Code("DRA521", N, "sidecar container with GPUs holds its own devices"),
    Code("DRA530", E, "workload would stay Pending: not enough devices in the ResourceSlices"),
    Code("DRA531", N, "GPUs asked for and devices published, per device class"),
    Code("DRA532", N, "mapping rule that matched no workload of the run"),
    Code("DRA533", W, "GPU product name in the configuration that the product catalog lacks"),
    Code("DRA534", W, "pod selects nodes by a GPU product no GPU has: a misspelled one"),
    Code(
        "DRA535",
        W,
        "GPU shared between pods converted to a claim per pod: each takes a whole device",
    ),
    # 54x: the plan's sharing model (migration/sharing.py)
    Code("DRA540", N, "GPU sharing model of the fleet assumed: exclusive GPUs"),
    Code(
        "DRA541",
        W,
        "bridged extended resource is shared on the device plugin: not served by an exclusive DeviceClass",
    ),
    # 6xx: cluster mode: the live cluster (inventory --cluster, validate --cluster) or its dumps
    Code("DRA601", E, "no usable kubeconfig, context or in-cluster service account"),
    Code("DRA602", E, "API server unreachable"),
    Code("DRA603", E, "credentials rejected (401): expired or invalid"),
    Code("DRA604", E, "forbidden (403): the account lacks a read permission"),
    Code("DRA605", E, "unexpected answer from the API server"),
    Code("DRA606", W, "no resource.k8s.io API to read: extended resources only"),
    Code("DRA607", W, "node gets GPUs from both the device plugin and a DRA driver"),
    Code("DRA608", W, "ResourceClaim pending longer than the threshold"),
    Code("DRA609", W, "dump file holds no object the inventory reads"),
    Code("DRA610", N, "devices read from the live cluster"),
    Code("DRA611", E, "API answer larger than the response size limit"),
    Code("DRA612", E, "list that does not end: a continue token again, or too many pages"),
    # 80x-84x: simulate, the migration placed by a real control plane
    Code("DRA801", E, "workload binds fewer pods after the conversion"),
    Code("DRA802", E, "API server refuses a converted object"),
    Code("DRA803", E, "container gets a different number of devices after the conversion"),
    Code("DRA804", W, "pods land on other node pools after the conversion"),
    Code("DRA805", W, "workload binds more pods after the conversion than before"),
    Code("DRA806", W, "workload places no pod before the conversion: nothing to compare"),
    Code("DRA807", E, "workload missing from the tree after the conversion"),
    Code("DRA808", W, "scheduler did not settle within the deadline"),
    Code("DRA809", N, "custom resource placed through its pod templates: operator absent"),
    Code("DRA810", W, "chart or kustomization not placed: its workloads are not simulated"),
    Code("DRA811", W, "workload differs only while competing for GPUs: holds when placed alone"),
    Code(
        "DRA812",
        N,
        "fewer pods after on a shared GPU pool: what the pool advertised and what the driver publishes",
    ),
    # 9xx: the tool's own failures
    Code("DRA900", E, "internal error", blocks=True),
    Code("DRA901", E, "generated object fails schema validation", blocks=True),
    Code("DRA902", E, "generated text does not load back to what was intended", blocks=True),
)


@dataclass(frozen=True, order=True, slots=True)
class Finding:
    """One thing to tell the user, at a place in a file (line and column 1-based);
    ordered by place, then code."""

    path: str
    line: int
    col: int
    code: str
    message: str
    hint: str = ""

    @property
    def spec(self) -> Code:
        return CODES[self.code]

    @property
    def severity(self) -> Severity:
        return self.spec.severity

    @property
    def blocks(self) -> bool:
        return self.spec.blocks

    @property
    def unprocessed(self) -> bool:
        return self.spec.unprocessed

    def format(self) -> str:
        """The one-line form every command prints:
        ``path:line:col: CODE severity: message``.

        A finding about the run itself (no file) prints as
        ``dra-migrate: CODE severity: message``.
        Paths, messages and hints are escaped (``escape``, ``quote_path``): a file
        name or a workload name cannot start a line of its own or forge another finding.
        """
        where = f"{quote_path(self.path)}:{self.line}:{self.col}" if self.path else "dra-migrate"
        text = f"{where}: {self.code} {self.severity.value}: {escape(self.message)}"
        if self.hint:
            text += f"; hint: {escape(self.hint)}"
        return text

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "hint": self.hint,
        }


# Characters that must never reach a terminal or a generated line as they are:
# controls (line breaks, escape sequences), format characters (bidirectional
# overrides, zero-width joiners), line and paragraph separators, and the
# surrogates that stand for bytes of a file name that is not UTF-8.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def unsafe(char: str) -> bool:
    return unicodedata.category(char) in _UNSAFE_CATEGORIES


def has_unsafe(text: str) -> bool:
    """Whether ``text`` holds an unsafe character. Every unsafe category is one
    ``str.isprintable`` refuses, so printable text (nearly all) is answered in C."""
    return not text.isprintable() and any(unsafe(c) for c in text)


def escape(text: str) -> str:
    """``text`` with every unsafe character written as ``\\n``, ``\\t``, ``\\xNN``,
    ``\\uNNNN``; a text without one comes back as it is."""
    if not has_unsafe(text):
        return text
    return "".join(_escape_char(c) if unsafe(c) else c for c in text)


def _escape_char(char: str) -> str:
    code = ord(char)
    if char in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


_FORGERY = re.compile(r'["\\]|:[ \d]')


def quote_path(path: str) -> str:
    """A path as findings and diff headers print it.

    An ordinary path comes back as it is. One holding an unsafe character, a
    double quote, a backslash, ``": "`` or ``:`` before a digit (which could make
    the path read as ``path:line:col: CODE``) is quoted the way git quotes paths: in double
    quotes, with C escapes and ``:`` written ``\\072``.
    """
    if not has_unsafe(path) and not _FORGERY.search(path):
        return path
    out = []
    for char in path:
        if char in '"\\':
            out.append("\\" + char)
        elif char == ":":
            out.append("\\072")
        elif unsafe(char):
            out.append(_escape_char(char))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def utf8(text: str) -> str:
    """``text`` as it is when UTF-8 can hold it; else (a file name that is not UTF-8,
    read as surrogates) with those bytes and every other unsafe character written as
    the text view writes them (``escape``): every format stays text."""
    if text.isprintable() or not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return text
    return escape(text)


# What the GitHub Actions runner reads as a workflow command in a line of a step's
# log (stdout or stderr alike): ``::name ...::`` after leading white space (the v2
# form), and ``##[name ...]`` anywhere in the line (the legacy form). The runner
# compares with the culture's rules, which skip characters that weigh nothing
# (controls, format characters, combining and other ignorable marks): those may sit
# between the characters of a command and still make one.
_WEIGHTLESS_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Me"})
_WEIGHTLESS_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")  # Hangul fillers


def _weightless(char: str) -> bool:
    return char in _WEIGHTLESS_LETTERS or unicodedata.category(char) in _WEIGHTLESS_CATEGORIES


@dataclass(frozen=True, slots=True)
class Inert:
    """How a format writes ``#`` and ``:`` so that they mean the same to its reader
    and nothing to the Actions runner."""

    hash: str
    colon: str


TEXT_INERT = Inert("\\x23", "\\x3a")  # the text view's escapes (``escape``)
JSON_INERT = Inert("\\u0023", "\\u003a")  # inside a JSON string
XML_INERT = Inert("&#35;", "&#58;")  # XML, HTML and Markdown: character references


def inert(text: str, form: Inert = TEXT_INERT, starts_line: bool = True) -> str:
    """``text`` with no line the Actions runner would take for a workflow command:
    in each line, the second ``#`` of ``##[`` and (when ``text`` starts a line) the
    first ``:`` of a line that starts with ``::`` are written in ``form``
    (weightless characters between them count as nothing). A line of the tool's own
    annotations is never passed here whole, only their messages (``starts_line``
    False)."""
    if "#" not in text and ":" not in text:
        return text
    lines = text.split("\n")
    return "\n".join(_inert_line(line, form, i > 0 or starts_line) for i, line in enumerate(lines))


def _inert_line(line: str, form: Inert, starts_line: bool) -> str:
    if ":" not in line and "#" not in line:
        return line
    chars = list(line)
    # v2: "::" at the start, after white space and weightless characters
    first = _after(chars, -1) if starts_line else None
    if first is not None and chars[first] == ":":
        second = _after(chars, first)
        if second is not None and chars[second] == ":":
            chars[first] = form.colon
    # legacy: "##[" anywhere
    at = line.find("#")
    while at != -1:
        second = _after(chars, at)
        if second is not None and chars[second] == "#":
            third = _after(chars, second)
            if third is not None and chars[third] == "[":
                chars[second] = form.hash
        at = line.find("#", at + 1)
    return "".join(chars)


def _after(chars: list[str], index: int) -> int | None:
    """The index of the first character after ``index`` that has weight (white space
    counts as none before the first one, where the runner trims it)."""
    for i in range(index + 1, len(chars)):
        char = chars[i]
        if not (_weightless(char) or (index < 0 and char.isspace())):
            return i
    return None


def finding(code: str, path: str, line: int, col: int, message: str, hint: str = "") -> Finding:
    if code not in CODES:  # a typo in the code table is a programming error
        raise KeyError(f"unknown finding code {code}")
    return Finding(path, line, col, code, message, hint)


class ConfigError(Exception):
    """A usage or configuration problem: exit status 2."""

    def __init__(self, message: str, path: str = "", line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.path, self.line, self.col = path, line, col

    def format(self) -> str:
        if self.path:
            return f"{self.path}:{self.line}:{self.col}: {self.args[0]}"
        return str(self.args[0])


class InputProblem(Exception):
    """A file cannot be processed; ``finding`` says where and why."""

    def __init__(self, problem: Finding) -> None:
        super().__init__(problem.format())
        self.finding = problem
