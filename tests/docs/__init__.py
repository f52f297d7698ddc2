"""The README, the docs site and the deployment files: every code block run or validated."""
