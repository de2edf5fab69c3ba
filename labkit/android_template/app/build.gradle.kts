import org.jetbrains.kotlin.gradle.dsl.JvmTarget

plugins {
    id("com.android.application")
    id("org.jetbrains.kotlin.android")
}

android {
    namespace = "@@PACKAGE@@"
    compileSdk = @@COMPILE_SDK@@

    defaultConfig {
        applicationId = "@@PACKAGE@@"
        minSdk = @@MIN_SDK@@
        targetSdk = @@COMPILE_SDK@@
        versionCode = 1
        versionName = "1.0"
    }

    buildTypes {
        release {
            isMinifyEnabled = false
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
}

kotlin {
    compilerOptions {
        jvmTarget.set(JvmTarget.JVM_17)
    }
}

dependencies {
    // The same version as the onnxruntime Python package that converted the model.
    implementation("com.microsoft.onnxruntime:onnxruntime-android:@@ORT_VERSION@@")
}
