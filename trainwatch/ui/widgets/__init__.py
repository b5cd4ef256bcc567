"""Dashboard widgets; each one redraws only when the store data it shows changed."""
