"""Pictures of autograd graphs: the walk, Graphviz and the built-in SVG layout, styles, the
step-by-step backward replay and the torchviz bridge; lesson 04's broadcast picture."""
