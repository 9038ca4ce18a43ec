// Simulated devices live here.
