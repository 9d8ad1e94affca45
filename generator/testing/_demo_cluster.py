"""The made-up cluster a demo run measured: stable seeded numbers, chart and region tables,
and `cluster_for` (part of `generator.testing.demo_content`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from generator.testing.demo_scenario import RecipeDecl, RunDecl

_CHARTS: dict[str, tuple[str, str, str]] = {
    # component: (chart, namespace, repository)
    "gpu-operator": ("gpu-operator", "gpu-operator", "https://helm.ngc.nvidia.com/nvidia"),
    "network-operator": (
        "network-operator",
        "nvidia-network-operator",
        "https://helm.ngc.nvidia.com/nvidia",
    ),
    "kubeflow-trainer": ("kubeflow-trainer", "kubeflow-system", "oci://ghcr.io/kubeflow/charts"),
    "dynamo-platform": (
        "dynamo-platform",
        "dynamo-system",
        "https://helm.ngc.nvidia.com/nvidia/ai-dynamo",
    ),
    "slinky-slurm-operator": ("slurm-operator", "slinky", "oci://ghcr.io/slinkyproject/charts"),
}
_IMAGES: dict[str, str] = {
    "gpu-operator": "nvcr.io/nvidia/gpu-operator",
    "network-operator": "nvcr.io/nvidia/cloud-native/network-operator",
    "kubeflow-trainer": "ghcr.io/kubeflow/trainer/trainer-controller-manager",
    "dynamo-platform": "nvcr.io/nvidia/ai-dynamo/dynamo-operator",
    "slinky-slurm-operator": "ghcr.io/slinkyproject/slurm-operator",
}
_ACCELERATORS: dict[str, tuple[str, int, str, str, str]] = {
    # accelerator: (nvidia-smi product name, GPUs per node, arch, driver, CUDA)
    "h100": ("NVIDIA H100 80GB HBM3", 8, "amd64", "570.172.08", "12.8"),
    "h200": ("NVIDIA H200", 8, "amd64", "570.172.08", "12.8"),
    "gb200": ("NVIDIA GB200", 4, "arm64", "575.57.08", "12.9"),
    "gb300": ("NVIDIA GB300", 4, "arm64", "580.82.07", "13.0"),
    "vr200": ("NVIDIA VR200", 4, "arm64", "590.44.01", "13.1"),
}
_INSTANCE_TYPES: dict[tuple[str, str], str] = {
    ("eks", "h100"): "p5.48xlarge",
    ("eks", "gb300"): "p6e-gb300.36xlarge",
    ("gke", "gb200"): "a4x-highgpu-4g",
    ("oke", "gb300"): "BM.GPU.GB300.4",
    ("aks", "h100"): "Standard_ND96isr_H100_v5",
}
_REGIONS: dict[str, tuple[str, ...]] = {
    "eks": ("us-east-1", "us-west-2"),
    "gke": ("us-central1", "europe-west4"),
    "oke": ("us-ashburn-1", "us-phoenix-1"),
    "aks": ("eastus", "southcentralus"),
}
_KERNELS = {
    "eks": "6.8.0-1031-aws",
    "gke": "6.6.87+",
    "aks": "5.15.0-1089-azure",
    "oke": "6.8.0-1027-oracle",
}
_NET_PLUGINS = {"eks": "Libfabric", "gke": "gIB", "aks": "IB", "oke": "IB"}
_FAILURES = {
    "gang-scheduling": "gang-scheduling: PodGroup aicr-validation/gang-probe reached 2 of "
    "minMember 4 within 300s",
    "pod-autoscaling": "pod-autoscaling: HorizontalPodAutoscaler dynamo-frontend stayed at 1 "
    "replica for 180s (target 2)",
}


def stable_int(seed: str, *parts: str) -> int:
    """A non-negative integer fully determined by the seed and `parts`."""
    joined = "\x00".join((seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(joined).digest()[:8], "big")


def stable_hex(seed: str, *parts: str, length: int = 40) -> str:
    """`length` lowercase hex characters determined by the seed and `parts`."""
    return hashlib.sha256("\x00".join((seed, *parts)).encode()).hexdigest()[:length]


# --------------------------------------------------------------------------- cluster facts


@dataclass(frozen=True)
class Cluster:
    """One validated cluster as the snapshot agent saw it."""

    service: str
    accelerator: str
    os: str
    os_version: str
    k8s_version: str
    region: str
    node_count: int
    gpu_node_count: int
    gpus_per_node: int
    arch: str
    driver: str
    cuda: str
    product: str
    instance_type: str
    kernel: str


def cluster_for(seed: str, decl: RecipeDecl, run: RunDecl) -> Cluster:
    """The cluster a run validated, consistent with the recipe criteria."""
    c = decl.criteria
    service = c.get("service", "")
    accelerator = c.get("accelerator", "")
    os_kind = c.get("os", "")
    key = (run.recipe, run.signer or "pending", run.at.isoformat())
    product, per_node, arch, driver, cuda = _ACCELERATORS.get(
        accelerator, (f"NVIDIA {accelerator.upper()}", 8, "amd64", "570.172.08", "12.8")
    )
    regions = _REGIONS.get(service, ("",))
    gpu_nodes = (
        run.gpu_nodes
        if run.gpu_nodes is not None
        else (2, 4, 8)[stable_int(seed, "gpu-nodes", *key) % 3]
    )
    if os_kind == "cos":
        os_version = "121"
    else:
        os_version = "24.04" if arch == "arm64" else "22.04"
    return Cluster(
        service=service,
        accelerator=accelerator,
        os=os_kind,
        os_version=os_version,
        k8s_version=f"1.33.{1 + stable_int(seed, 'k8s', *key) % 5}",
        region=regions[stable_int(seed, "region", *key) % len(regions)],
        node_count=gpu_nodes + 2 + stable_int(seed, "cpu-nodes", *key) % 3,
        gpu_node_count=gpu_nodes,
        gpus_per_node=per_node,
        arch=arch,
        driver=driver,
        cuda=cuda,
        product=product,
        instance_type=_INSTANCE_TYPES.get((service, accelerator), f"dgx-{accelerator}"),
        kernel=_KERNELS.get(service, "6.8.0-79-generic"),
    )
