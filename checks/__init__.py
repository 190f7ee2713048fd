"""The checks, one module each, installed as `tfdoctor.checks`.

MODULES is the registration hook: the registry imports these modules in this order and collects
every `Check` they define (see tfdoctor/checking/registry.py). The order is the report order: platform first,
then the install, the import, the accelerators, memory, and the timing probe last.
"""

MODULES = (
    "platform_support",
    "architecture",
    "macos_version",
    "cpu_instructions",
    "tensorflow_install",
    "dependencies",
    "install_integrity",
    "installer",
    "shadowing",
    "tensorflow_import",
    "keras",
    "companions",
    "metal_plugin",
    "nvidia_driver",
    "cuda_build",
    "gpu_visible",
    "memory",
    "probe",
    "workload",
    "requirements",
)
