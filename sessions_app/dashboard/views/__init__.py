"""Dashboard views, one module per page group; each view is a small typed function behind `permissions`."""
