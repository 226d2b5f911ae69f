"""DialSim (Kim et al.): an agent plays a TV show's main character and answers questions about the past."""
