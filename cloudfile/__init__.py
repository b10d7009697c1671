"""Cloud description files: the YAML/JSON format that ``gantt-manage cloud
load`` reads (documented in README.md), its validation, loading and the
provider/capacity/usage report of ``gantt-manage cloud show``."""
