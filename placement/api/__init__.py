"""The Placement REST API (OpenStack Placement microversions 1.0-1.39)
as a WSGI application: see app.make_app, and routes.ROUTES for what it
serves."""
