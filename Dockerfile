# askopt images, pinned to the lock files. Two targets:
#   docker build --target cpu -t askopt:0.1.0 .       (Ray workers, the study, the consultant; CPU torch)
#   docker build --target gpu -t askopt:0.1.0-gpu .   (adds Ray Serve LLM + vLLM for the imitator; CUDA host)
# The CPU target takes torch 2.13.0 from PyTorch's CPU index so the image carries no CUDA libraries.

FROM python:3.11-slim AS base
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update && apt-get install -y --no-install-recommends gcc g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/askopt
COPY requirements.lock requirements-gpu.lock ./

FROM base AS cpu
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
 && pip install --no-deps -r requirements.lock
COPY . .
RUN pip install --no-deps . && askopt --help >/dev/null
EXPOSE 8000 8265
CMD ["askopt", "--help"]

# Ray's own CUDA image carries Python 3.11 and the CUDA runtime vLLM 0.29 needs.
FROM rayproject/ray:2.60.0-py311-gpu AS gpu
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /home/ray/askopt
COPY requirements-gpu.lock ./
RUN pip install -r requirements-gpu.lock
COPY . .
RUN pip install --no-deps . && askopt --help >/dev/null
EXPOSE 8000 8265
CMD ["askopt", "--help"]
