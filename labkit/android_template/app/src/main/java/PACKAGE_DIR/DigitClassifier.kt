package @@PACKAGE@@

import ai.onnxruntime.OnnxJavaType
import ai.onnxruntime.OnnxTensor
import ai.onnxruntime.OrtEnvironment
import ai.onnxruntime.OrtSession
import java.nio.ByteBuffer
import java.nio.ByteOrder

/** Where ONNX Runtime runs the model. CPU is the baseline; compare the others against it. */
enum class Backend(val label: String) {
    CPU("CPU"),
    XNNPACK("XNNPACK"),
    NNAPI("NNAPI"), // deprecated from Android 15 on: keep CPU and XNNPACK as the fallback
}

data class Prediction(val label: String, val confidence: Float, val millis: Double, val backend: Backend)

/** One ONNX Runtime session per backend, each created once (on first use) and closed by close(). */
class DigitClassifier(private val modelBytes: ByteArray) : AutoCloseable {
    companion object {
        // Read from the model by labkit.android.create_project, not typed by hand:
        const val INPUT_NAME = @@INPUT_NAME@@
        const val OUTPUT_NAME = @@OUTPUT_NAME@@
        /** The model's input shape is @@INPUT_SHAPE_TEXT@@ (a symbolic dimension is fed as 1). */
        val INPUT_SHAPE = longArrayOf(@@INPUT_SHAPE@@)
        val INPUT_TYPE = OnnxJavaType.@@INPUT_JAVA_TYPE@@
        val LABELS = arrayOf(@@LABELS@@)
    }

    private val env = OrtEnvironment.getEnvironment()
    private val sessions = HashMap<Backend, OrtSession>()
    /** Timed runs per prediction, after one untimed warm-up run: one run alone measures mostly noise. */
    private val timedRuns = 5

    private fun session(backend: Backend): OrtSession = sessions.getOrPut(backend) {
        OrtSession.SessionOptions().use { options ->
            // The .ort file was converted with optimization style "Runtime": replay the saved optimizations.
            options.addConfigEntry(@@RUNTIME_OPT_KEY@@, "1")
            when (backend) {
                Backend.CPU -> options.setIntraOpNumThreads(2)
                Backend.XNNPACK -> {
                    // XNNPACK has its own thread pool: keep ORT's at one thread and stop it spinning.
                    options.addConfigEntry("session.intra_op.allow_spinning", "0")
                    options.setIntraOpNumThreads(1)
                    options.addXnnpack(mapOf("intra_op_num_threads" to "2"))
                }
                Backend.NNAPI -> options.addNnapi()
            }
            env.createSession(modelBytes, options)
        }
    }

    /** counts: the CELLS x CELLS values 0..16 from Downsample.toModelInput. */
    fun classify(counts: IntArray, backend: Backend): Prediction {
        val sess = session(backend)
        val isFloat = INPUT_TYPE == OnnxJavaType.FLOAT
        val buffer = ByteBuffer.allocateDirect(counts.size * (if (isFloat) 4 else 1)).order(ByteOrder.nativeOrder())
        for (v in counts) {
            if (isFloat) buffer.putFloat(v.toFloat()) else buffer.put(v.toByte())
        }
        buffer.rewind()
        return OnnxTensor.createTensor(env, buffer, INPUT_SHAPE, INPUT_TYPE).use { input ->
            val feed = mapOf(INPUT_NAME to input)
            sess.run(feed).close()                                   // warm-up, not timed
            val start = System.nanoTime()
            repeat(timedRuns - 1) { sess.run(feed).close() }
            sess.run(feed).use { result ->
                val millis = (System.nanoTime() - start) / 1e6 / timedRuns
                val output = result.get(OUTPUT_NAME).get() as OnnxTensor
                val scores = output.floatBuffer
                val probs = FloatArray(scores.remaining())
                scores.get(probs)
                var best = 0
                for (i in probs.indices) {
                    if (probs[i] > probs[best]) best = i
                }
                Prediction(LABELS[best], probs[best], millis, backend)
            }
        }
    }

    override fun close() {
        for (s in sessions.values) s.close()
        sessions.clear()
    }
}
