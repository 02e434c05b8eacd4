from recovery.worker.cli import main

main()
