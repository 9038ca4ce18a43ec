// The real-time loop lives here.
