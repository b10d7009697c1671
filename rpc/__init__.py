"""The oslo.messaging scheduler service and its conductor client."""

import warnings

from oslo_service import backend as _service_backend

# oslo.messaging imports oslo.service, whose default backend is eventlet,
# and futurist imports eventlet whenever it is installed (oslo.service
# requires it): each start would warn that eventlet is deprecated, though
# gantt runs on threads (the threading executor). Unless the process has
# chosen a backend already, take oslo.service's threading one (as Nova
# does), and do not warn about an import gantt never uses.
_service_backend.register_backend_default_hook(
    lambda: _service_backend.BackendType.THREADING)
warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")
