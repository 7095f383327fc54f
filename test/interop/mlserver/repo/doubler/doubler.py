"""MLServer custom runtime for infergate interop tests: OUTPUT0 = 2 * INPUT0 (FP32)."""

import numpy as np
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.types import InferenceRequest, InferenceResponse


class Doubler(MLModel):
    async def load(self) -> bool:
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        request_input = next(i for i in payload.inputs if i.name == "INPUT0")
        values = NumpyCodec.decode_input(request_input).astype(np.float32)
        output = NumpyCodec.encode_output(name="OUTPUT0", payload=values * 2)
        return InferenceResponse(model_name=self.name, id=payload.id, outputs=[output])
