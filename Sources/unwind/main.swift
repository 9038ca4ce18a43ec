print("unwind")
