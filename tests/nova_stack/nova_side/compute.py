"""Start nova-compute with the harness's drivers loadable.

Runs inside Nova's virtualenv: ``python compute.py --config-file ...``.
Nova 34 loads ``[DEFAULT] compute_driver`` only from the nova.virt
package (it prefixes the name with ``nova.virt.``), so a driver of our
own has to be found there: this adds this folder to nova.virt's package
path, then runs Nova's own nova-compute entry point unchanged.
"""

import os
import sys

# Both are plain packages that import nothing: nova.cmd.compute still
# applies Nova's concurrency choice before anything else is loaded.
import nova.virt
from nova.cmd import compute

nova.virt.__path__.append(os.path.dirname(os.path.abspath(__file__)))

if __name__ == "__main__":
    sys.argv[0] = "nova-compute"
    sys.exit(compute.main())
